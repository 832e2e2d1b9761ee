"""The C scanner's twin in polars and numpy: pieces of a TREC run file to the scanner's outputs, vectorised.

Installs without the C extension (no compiler, no wheel) and ``GAINSCOPE_NATIVE=0`` scan TREC run files with
:func:`scan_piece` instead of ``gainscope._scan.scan_trec_run``: it takes a piece of whole queries (cut by
:func:`gainscope.io.scan.query_pieces`) and returns the same dict -- per ranked query its id, number of ranked
documents, tie groups and rank steps; per judged position its rank, judgment row and score -- so that everything
after the scan is shared (:func:`gainscope.io.scan._gathered`). No Python object is made per line.

Like the C scanner it is an accelerator, never a second set of rules: it takes a piece only when its bytes are
plain, and otherwise returns the reason (``{"fallback": ...}``), and the Python readers read the file and give the
exact error, warning or result. Plain means, checked on the bytes before polars splits them:

* one separator, the first line's (a tab if it has one, else a space), once between fields: no other whitespace
  (the other separator, VT, FF), no separator twice in a row, none at the start or the end of a line, no blank
  line, no comment line, and lines ending with ``\\n`` (or every line with ``\\r\\n``);
* no control character (C0 but the separator and line ends, DEL, C1), no line longer than
  :data:`~gainscope.io.text.MAX_LINE_BYTES`, and valid UTF-8 (polars refuses anything else in every column, as
  Python's strict decoder does: tested);
* exactly 6 fields per line (at least 6 with ``extra_columns="ignore"``), counted: separators = 5 x lines, and
  polars returns one row per line with no field missing.

The fields are then checked with the readers' own expressions (:data:`~gainscope.io.frames.INT_RE`,
:data:`~gainscope.io.frames.FLOAT_RE` and the casts of :func:`~gainscope.io.frames.convert_run_values`): a rank that
is not a plain integer, a score that is not a finite decimal number, run tags that differ, a query whose lines
are not together and a document listed twice for a query go to the readers, as in C.

Ordering is trec_eval's (score descending, then doc id descending, bytes) or the rank column's (then line order).
Files are nearly always sorted by score already: that is checked in one pass, and then only the groups of tied
scores are sorted by doc id (polars compares strings as bytes); otherwise the piece is sorted whole.

Judgments are looked up by a 64-bit key per (query, doc): polars' hash of the doc id mixed with the judged query's
index, joined with the same keys of the judgments (made once per :class:`PreparedJudgments`); every match is then
checked against the judgment's own query and doc id, so a collision of hashes can only send the file to the
readers, never change a result. Duplicates are found the same way, with the query's position in the piece.
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from gainscope.core.judged_run import PreparedJudgments, query_index
from gainscope.deferred import deferred_module
from gainscope.io.text import BOM, MAX_LINE_BYTES

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = ["JudgmentKeys", "judgment_keys", "read_qrels", "scan_piece"]

_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: (query index + 1) * _MIX differs for every index
_FILTER = 1 << 20  # entries of the table that sifts the lines whose key may be a judgment's
_C1 = re.compile(b"\xc2[\x80-\x9f]")  # U+0080..U+009F in UTF-8
_MAYBE_NOT_NFC = "[^\x00-\u02ff]"  # strings of code points below U+0300 are in NFC (C1 controls refused before)


class JudgmentKeys(NamedTuple):
    """The judgments of a :class:`PreparedJudgments` keyed for :func:`scan_piece`: the 64-bit key of every
    judgment row, the rows by judged query (``rows[offsets[q]:offsets[q + 1]]`` are query ``q``'s), the judged
    query index of every row, the doc ids, and the index of every judged query id."""

    key: np.ndarray
    rows: np.ndarray
    offsets: np.ndarray
    row_query: np.ndarray
    doc_ids: pl.Series
    position: dict[str, int]


_keys: weakref.WeakKeyDictionary[PreparedJudgments, JudgmentKeys] = weakref.WeakKeyDictionary()


def _mix(number: np.ndarray) -> np.ndarray:
    """What the key of a document of query ``number`` mixes into its doc id's hash: (number + 1) x _MIX."""
    return (number.astype(np.uint64) + np.uint64(1)) * _MIX


def judgment_keys(prepared: PreparedJudgments) -> JudgmentKeys:
    """The keys of ``prepared``'s judgments (made once per prepared judgments)."""
    keys = _keys.get(prepared)
    if keys is None:
        frame = prepared.frame
        position = {q: i for i, q in enumerate(prepared.query_ids)}
        row_query = query_index(frame["query_id"])[1]  # the index of each row's query in prepared.query_ids
        docs = frame["doc_id"]
        offsets = np.zeros(len(position) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_query, minlength=len(position)), out=offsets[1:])
        keys = _keys[prepared] = JudgmentKeys(docs.hash().to_numpy() ^ _mix(row_query),
                                              np.argsort(row_query, kind="stable"), offsets, row_query, docs,
                                              position)
    return keys


def _schema() -> dict[str, Any]:
    """The six columns, as polars reads them: text, the Q0 column and the run tag as categories (cheaper)."""
    return {"query_id": pl.String, "q0": pl.Categorical, "doc_id": pl.String, "rank": pl.Int64, "score": pl.Float64,
            "tag": pl.Categorical}


_READ = [0, 2, 3, 4, 5]  # every column but Q0, which the readers ignore: polars still checks its bytes are UTF-8
# (tested), and an empty one is a separator twice in a row (refused on the bytes)


def _fallback(reason: str) -> dict[str, Any]:
    return {"fallback": reason, "line": 0}


def _read(data: bytes, schema: dict[str, Any], columns: list[int] | None, unparsed: str
          ) -> tuple[pl.DataFrame, bytes, bool, bool] | str:
    """``data`` read by polars with ``schema`` (only ``columns``, by position, when given) once its bytes are plain
    (:func:`_plain_bytes`): the frame, the separator, whether lines end with CRLF and whether the bytes are ASCII;
    else why not (``unparsed`` when polars cannot parse a typed field: the readers say what is wrong)."""
    if not data:
        return "no data line"
    ascii_only = data.isascii()
    plain = _plain_bytes(data, ascii_only)
    if isinstance(plain, str):
        return plain
    sep, crlf = plain
    try:
        frame = pl.read_csv(data, has_header=False, separator=sep.decode(), quote_char=None, eol_char="\n",
                            schema=schema, columns=columns, truncate_ragged_lines=True, extra_columns="ignore",
                            raise_if_empty=False, encoding="utf8")
    except pl.exceptions.PolarsError:
        return unparsed
    return frame, sep, crlf, ascii_only


def _plain_bytes(data: bytes, ascii_only: bool) -> tuple[bytes, bool] | str:
    """The separator and whether lines end with CRLF, when the checks made on the bytes alone pass (see the module
    docstring; the counts that need the number of lines are made by :func:`_counted`); else why not. Only searches
    for one byte: C speed."""
    first = data[: data.find(b"\n")] if b"\n" in data else data
    sep, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
    if other in data:
        return "whitespace other than one separator between fields"
    if b"\x7f" in data:
        return "a control character"
    crlf = b"\r" in data
    if crlf and not (data.endswith(b"\n") and data.count(b"\r\n") == data.count(b"\n")):
        return "a carriage return that does not end a line"
    if _long_line(data):
        return "a line longer than the limit"
    if _doubled(data, sep):  # an empty field (polars does not read the Q0 column, whose emptiness this says)
        return "a separator twice in a row"
    if not ascii_only and _C1.search(data):  # polars refuses bytes that are not UTF-8 in any column
        return "a C1 control character"
    return sep, crlf


def _counted(data: bytes, sep: bytes, crlf: bool, rows: int, extra_ok: bool, fields: int = 6) -> str | None:
    """Why the bytes are not ``rows`` plain lines (None when they are): the bytes below 32 must be exactly the line
    ends (a LF per line but maybe the last, a CR before each with CRLF) and tab separators, and without
    ``extra_columns="ignore"`` the separators must be ``fields - 1`` per line. With polars' rows, one per line (none
    missing: a blank line would be one), this says no line has another control character and none has more than
    ``fields`` fields."""
    codes = np.frombuffer(data, dtype=np.uint8)
    ends = rows - (not data.endswith(b"\n"))
    below = int(np.count_nonzero(codes < 32))
    tabs = 0
    if sep == b"\t":
        tabs = (fields - 1) * rows if not extra_ok else data.count(b"\t")
    elif not extra_ok and int(np.count_nonzero(codes <= 32)) - below != (fields - 1) * rows:
        return f"a line with more than {fields} columns"
    if below != ends * (2 if crlf else 1) + tabs:
        return f"a control character, or a line with more than {fields} columns"  # VT, FF: not plain
    return None


def _doubled(data: bytes, sep: bytes) -> bool:
    """True when ``sep`` appears twice in a row in ``data``: the bytes read as 16-bit words from offsets 0 and 1, one
    comparison each (no copy)."""
    if len(data) < 2:
        return False
    pair = int.from_bytes(sep * 2, "little")
    even = np.frombuffer(data, dtype=np.uint16, count=len(data) // 2)
    odd = np.frombuffer(data, dtype=np.uint16, count=(len(data) - 1) // 2, offset=1)
    return bool((even == pair).any() or (odd == pair).any())


_BLOCK = MAX_LINE_BYTES // 2


def _long_line(data: bytes) -> bool:
    """True when a line of ``data`` is longer than MAX_LINE_BYTES. Every aligned block of MAX_LINE_BYTES / 2 bytes
    holding a line end means none is (two line ends are then less than MAX_LINE_BYTES apart); else the lines are
    measured."""
    if all(data.find(b"\n", k, k + _BLOCK) >= 0 for k in range(0, len(data), _BLOCK)):
        return False
    bounds = np.concatenate(([-1], np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10), [len(data)]))
    return int(np.diff(bounds).max()) - 1 > MAX_LINE_BYTES


def scan_piece(piece: bytes | memoryview, prepared: PreparedJudgments, order: int, depth: int, judged_only: bool,
               *, extra_ok: bool = False, f32: bool = False) -> dict[str, Any]:
    """What ``gainscope._scan.scan_trec_run`` returns for ``piece`` (whole lines of whole queries, without a byte
    order mark): ``order`` 0 for trec_eval's order, 1 for the rank column's; ``depth`` -1 for none; the ids the
    readers check for their Unicode form listed (every id that is not ASCII). Or ``{"fallback": reason}``."""
    data = bytes(piece)
    read = _read(data, _schema(), _READ, "a rank that is not a plain integer or a score that is not a number")
    if isinstance(read, str):
        return _fallback(read)
    frame, sep, crlf, ascii_only = read
    if any(frame.null_count().row(0)):  # an empty field is null (two separators in a row), and so are missing ones
        return _fallback("a line with fewer than 6 columns, an empty field or a blank line")
    why = _counted(data, sep, crlf, frame.height, extra_ok)
    if why is not None:
        return _fallback(why)
    if frame["query_id"].str.starts_with("#").any():
        return _fallback("a comment line")
    if frame["tag"].n_unique() != 1:
        return _fallback("run tags that differ")
    tag = str(frame["tag"][0])
    tag = tag[:-1] if crlf and tag.endswith("\r") else tag
    if not tag:
        return _fallback("a line with fewer than 6 columns")  # "... score \r\n": the CR alone in the last field
    rank = frame["rank"].to_numpy()
    score = frame["score"].to_numpy()
    if not np.isfinite(score).all():
        return _fallback("a score that is not a finite decimal number")
    if f32:
        score = score.astype(np.float32).astype(np.float64)
    query, doc = frame["query_id"], frame["doc_id"]
    return _scanned(query, doc, rank, score, prepared, order, depth, judged_only, tag, ascii_only)


def _scanned(query: pl.Series, doc: pl.Series, rank: np.ndarray, score: np.ndarray, prepared: PreparedJudgments,
             order: int, depth: int, judged_only: bool, tag: str, ascii_only: bool) -> dict[str, Any]:
    n = len(rank)
    new = np.ones(n, dtype=bool)
    new[1:] = (query.slice(1) != query.slice(0, n - 1)).to_numpy()
    starts = np.flatnonzero(new)
    ids: list[str] = query.gather(starts).to_list()
    if len(set(ids)) != len(ids):
        return _fallback("a query whose lines are not all together")
    group = np.cumsum(new) - 1
    keys = judgment_keys(prepared)
    judged_q = np.array([keys.position.get(i, -1) for i in ids], dtype=np.int64)
    # each query of the piece its own number in the keys: its judged index, else one beyond them all
    number = np.where(judged_q >= 0, judged_q, len(keys.position) + np.arange(len(ids)))
    line_keys = doc.hash().to_numpy() ^ _mix(number)[group]
    within = np.sort(line_keys)  # a document listed twice in a query has the same key twice
    if bool((within[1:] == within[:-1]).any()):
        return _fallback("a document listed twice for a query")
    judgment = _judgments(doc, line_keys, group, judged_q, keys)
    if judgment is None:
        return _fallback("judgment keys that collide")
    perm, ties, down, steps = _order(doc, group, starts, rank, score, order)
    if perm is not None:
        judgment = judgment[perm]
    nq = len(starts)
    sizes = np.diff(np.append(starts, n))
    at = np.flatnonzero(judgment >= 0)  # the judged positions: only they are kept in the outputs
    at_group = group[at]
    rank_at = at - starts[at_group] + 1  # 1-based position in the query
    if depth >= 0:
        within = rank_at <= depth
        at, at_group, rank_at = at[within], at_group[within], rank_at[within]
    if judged_only:  # unjudged (NaN grade, negative) documents are dropped: ranks count judged ones only
        judged = prepared.row_grades[judgment[at]] >= 0
        at, at_group = at[judged], at_group[judged]
        first = np.searchsorted(at_group, np.arange(nq))  # where each query's positions start
        rank_at = np.arange(len(at), dtype=np.int64) - first[at_group] + 1
        num_ret = np.bincount(at_group, minlength=nq).astype(np.int64)
    else:
        num_ret = np.minimum(sizes, depth) if depth >= 0 else sizes
    hit_offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(at_group, minlength=nq), out=hit_offsets[1:])
    encoded = [i.encode("utf-8") for i in ids]
    query_offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum([len(i) for i in encoded], out=query_offsets[1:])
    out: dict[str, Any] = {
        "query_blob": b"".join(encoded), "query_offsets": query_offsets,
        "num_ret": num_ret.astype(np.int64), "hit_offsets": hit_offsets, "hit_rank": rank_at.astype(np.int64),
        "hit_judgment": judgment[at], "hit_score": score[at if perm is None else perm[at]],
        "ties": ties, "rank_down": down, "rank_steps": steps, "tag": tag, "lines": n,
    }
    out.update(_check_ids(ids, doc, ascii_only))
    return out


def _judgments(doc: pl.Series, line_keys: np.ndarray, group: np.ndarray, judged_q: np.ndarray, keys: JudgmentKeys
               ) -> np.ndarray | None:
    """The judgment row of every line (-1: not judged), or None when the keys cannot tell (two judgments of the
    piece's queries share a key). ``judged_q``: each query's judged index (-1: not judged). Each line's key is
    looked up among the keys of its piece's judged queries, and every match is checked against the judgment's query
    and doc id."""
    judgment = np.full(len(group), -1, dtype=np.int64)
    present = judged_q[judged_q >= 0]
    lengths = keys.offsets[present + 1] - keys.offsets[present]
    total = int(lengths.sum())
    if not total:
        return judgment
    starts = np.repeat(keys.offsets[present] - np.cumsum(lengths) + lengths, lengths)
    rows = keys.rows[starts + np.arange(total, dtype=np.int64)]
    piece_keys = keys.key[rows]
    ordered = np.sort(piece_keys)
    if bool((ordered[1:] == ordered[:-1]).any()):
        return None
    # most lines are not judged: a table of the low bits of the judgments' keys leaves a few candidates to look up
    bits = np.zeros(_FILTER, dtype=bool)
    bits[piece_keys & np.uint64(_FILTER - 1)] = True
    candidate = bits[line_keys & np.uint64(_FILTER - 1)]
    if len(present) < len(judged_q):
        candidate &= (judged_q >= 0)[group]
    asked = np.flatnonzero(candidate)
    found = (pl.Series(line_keys[asked], dtype=pl.UInt64)
             .replace_strict(pl.Series(piece_keys, dtype=pl.UInt64), pl.Series(rows, dtype=pl.Int64), default=-1)
             .to_numpy())
    hit = asked[found >= 0]
    if len(hit):
        found = found[found >= 0]
        if not (np.array_equal(keys.row_query[found], judged_q[group[hit]])
                and bool((doc.gather(hit) == keys.doc_ids.gather(found)).all())):
            return None
        judgment[hit] = found
    return judgment


def _order(doc: pl.Series, group: np.ndarray, starts: np.ndarray, rank: np.ndarray, score: np.ndarray, order: int
           ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """The permutation that puts every query in final order (None: the lines' order), and per query the groups of
    tied scores, the steps down the score order that go to a better rank, and the steps."""
    n, nq = len(group), len(starts)
    zeros = np.zeros(nq, dtype=np.int64)
    same = group[1:] == group[:-1]
    if order == 1:  # the rank column's order, then the lines'
        if bool(np.all(~same | (rank[1:] >= rank[:-1]))):
            return None, zeros, zeros, zeros.copy()
        return np.lexsort((rank, group)), zeros, zeros, zeros.copy()
    key = score + 0.0  # -0.0 and 0.0 are equal scores
    perm: np.ndarray | None = None
    if not bool(np.all(~same | (key[1:] <= key[:-1]))):
        perm = (pl.DataFrame({"g": group, "s": key, "d": doc, "i": np.arange(n, dtype=np.int64)})
                .sort(["g", "s", "d"], descending=[False, True, True])["i"].to_numpy())
        key = key[perm]
        doc = doc.gather(perm)
    tied = same & (key[1:] == key[:-1])  # line i + 1 ties with line i
    if tied.any():
        member = np.zeros(n, dtype=bool)
        member[1:] |= tied
        member[:-1] |= tied
        at = np.flatnonzero(member)
        first = np.ones(len(at), dtype=bool)
        first[1:] = ~tied[at[1:] - 1]
        by_doc = (pl.DataFrame({"t": np.cumsum(first), "d": doc.gather(at), "i": at})
                  .sort(["t", "d"], descending=[False, True])["i"].to_numpy())
        perm = np.arange(n, dtype=np.int64) if perm is None else perm.copy()  # polars hands its arrays read-only
        perm[at] = perm[by_doc]
        ties = np.bincount(group[at[first]], minlength=nq).astype(np.int64)
    else:
        ties = zeros
    ordered = rank if perm is None else rank[perm]
    down = np.bincount(group[1:][same & (ordered[1:] < ordered[:-1])], minlength=nq).astype(np.int64)
    steps = np.bincount(group, minlength=nq).astype(np.int64) - 1
    return perm, ties, down, steps


def _check_ids(ids: list[str], doc: pl.Series, ascii_only: bool) -> dict[str, Any]:
    """The ids whose Unicode form Python checks (:func:`gainscope.io.scan.checked_ids`), each column in the lines'
    order: the query ids not in NFC, and the distinct doc ids polars' NFC changes, looked for only among those
    holding a code point from U+0300 on (every string of the code points before is in NFC: the first range of the
    C scanner's table, checked by ``tests/property/test_scan_utf8.py``)."""
    listed = [] if ascii_only else [i for i in ids if not unicodedata.is_normalized("NFC", i)]
    return _listed(listed, [] if ascii_only else _nfc_changes(doc))


def _nfc_changes(ids: pl.Series) -> list[str]:
    """The distinct ids of ``ids`` (in order) that polars' NFC changes, looked for only among those holding a code
    point from U+0300 on."""
    maybe = ids.filter(ids.str.contains(_MAYBE_NOT_NFC)).unique(maintain_order=True)
    return maybe.filter(maybe != maybe.str.normalize("NFC")).to_list()


def _listed(query_ids: list[str], doc_ids: list[str]) -> dict[str, Any]:
    """The ids for Python's check of their Unicode form, as the C scanner lists them (one blob, kinds 0 and 1)."""
    encoded = [i.encode("utf-8") for i in query_ids + doc_ids]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(i) for i in encoded], out=offsets[1:])
    return {"check_blob": b"".join(encoded), "check_offsets": offsets,
            "check_kind": bytes(len(query_ids)) + bytes([1]) * len(doc_ids)}


def read_qrels(path: str, columns: int) -> dict[str, Any]:
    """What ``gainscope._scan.read_qrels`` checks of a qrels file of ``columns`` fields (4: TREC, with the
    iteration column; 3: query, doc, grade), done vectorised: the judgments' frame (``query_id``, ``doc_id``,
    ``grade`` Int64, in file order) and the ids listed for Python's check of their Unicode form, or
    ``{"fallback": reason}``. The file is plain as for :func:`scan_piece` (the same checks on its bytes, the
    separators counted: ``columns - 1`` per line, no empty field, no comment line) and each grade an integer polars
    reads (``INT_RE`` within int64, as the readers cast it); a document judged twice is left to ``Judgments``,
    whose refusal sends the file to the readers as well."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(BOM):
        data = data[len(BOM):]
    schema = {"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String, "grade": pl.Int64}
    if columns == 3:
        del schema["iteration"]
    # the iteration column is not read, as Q0 in runs
    read = _read(data, schema, [0, 2, 3] if columns == 4 else None, "a grade that is not a plain integer")
    if isinstance(read, str):
        return _fallback(read)
    frame, sep, crlf, ascii_only = read
    if not frame.height or any(frame.null_count().row(0)):  # an empty field is null, and so are missing ones
        return _fallback(f"a line with fewer than {columns} columns, an empty field or a blank line")
    why = _counted(data, sep, crlf, frame.height, False, columns)
    if why is not None:
        return _fallback(why)
    query, doc = frame["query_id"], frame["doc_id"]
    if query.str.starts_with("#").any():
        return _fallback("a comment line")
    out: dict[str, Any] = {"frame": frame.select("query_id", "doc_id", "grade")}
    out.update(_listed([], []) if ascii_only else _listed(_nfc_changes(query), _nfc_changes(doc)))
    return out
