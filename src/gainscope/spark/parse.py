"""The executor side of text runs: lines that Spark read become the TREC reader's tokens, with their positions.

Spark's text source reads a file in blocks (``_metadata.file_block_start``), one task per block, lines in
order. :func:`parse_lines` numbers each block's lines (``idx``) and gives every row its *ordinal*
``file << 44 | (2 * block_start + idx)``: unique, and increasing in file order (a block's lines all start
after its first byte, so ``2 * start + idx`` stays below the next block's ``2 * start``). The driver turns an
ordinal back into a line number, and a byte offset, only when a message needs one
(:func:`gainscope.spark.sources.text_locator`).

The line rules are the TREC reader's (:mod:`gainscope.io.trec`, :mod:`gainscope.io.text`), vectorised over a
batch: lines split at runs of ASCII whitespace, a line whose first byte is ``#`` is a comment, blank lines
are skipped, the first data line of a file that looks like a header is refused, a line with the wrong number
of columns is refused with the reader's message and hint, bytes that are not UTF-8 are refused with the line
and byte offset; a UTF-8 byte order mark at the start of a file is dropped. A file whose first bytes are the
gzip magic number but whose name does not end in ``.gz`` (Spark decompresses by name) is refused. Problems
travel as :class:`~gainscope.spark.facts.Facts` rows (``_kind = 2``); values are checked later, with the
query's other rows, by :func:`~gainscope.io.frames.finish_run`.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa

from gainscope.errors import FormatError
from gainscope.io.compressed import COMPRESSIONS
from gainscope.io.frames import Origin
from gainscope.io.jsonl import _Rows, _run_record  # the JSON Lines reader's own record rules
from gainscope.io.jsonl import _type as json_type
from gainscope.io.text import BOM, MAX_LINE_BYTES, MAX_RECORD_BYTES, long_line_message
from gainscope.io.trec import _LONE_CR as LONE_CR
from gainscope.io.trec import _LONE_CR_MESSAGE as LONE_CR_MESSAGE
from gainscope.io.trec import LAYOUTS, Layout
from gainscope.io.trec import _columns_message as columns_message  # the TREC reader's own messages
from gainscope.io.trec import _header_message as header_message
from gainscope.io.trec import _looks_like_header as looks_like_header
from gainscope.io.trec import _show as show
from gainscope.spark.facts import Facts, Problem
from gainscope.spark.partition import INPUT_KINDS

__all__ = ["FILE_SHIFT", "LineIndex", "LinePlan", "normal_uri", "parse_lines", "stream_schema"]

FILE_SHIFT = 44
_WS = r"[ \t\r\x0B\x0C]+"


def normal_uri(uri: str) -> str:
    """One spelling of a file URI (Spark writes ``file:/x`` in metadata and ``file:///x`` in listings)."""
    if uri.startswith("file:"):
        return "file://" + "/" + uri[5:].lstrip("/")
    return uri


@dataclass(frozen=True)
class LinePlan:
    """How to read the lines of one run input: the format (``trec``, ``msmarco`` or ``jsonl``) and what
    columns after a TREC run's tag are (``extra_columns``, as for :func:`gainscope.io.read_run`)."""

    fmt: str
    extra_columns: str = "error"
    check_ranks: bool = False  # a detected MS MARCO run: each query's ranks must be 1, 2, ..., n, its lines together

    @property
    def layout(self) -> Layout:
        layout = LAYOUTS[("run", self.fmt)]
        if self.fmt == "trec" and self.extra_columns == "ignore":  # as the TREC reader: notes after the tag
            layout = dataclasses.replace(layout, exact=False)
        return layout

    @property
    def roles(self) -> list[str]:
        """The value columns of the rows (text tokens, as the reader gives them)."""
        if self.fmt == "jsonl":
            return ["score", "rank"]
        return [role for role, _ in self.layout.roles if role not in ("query_id", "doc_id")]

    @property
    def names(self) -> list[str]:
        """The columns of :func:`parse_lines`' output."""
        return ["_kind", "query_id", "doc_id", *self.roles, "_ord", *(["_sub"] if self.fmt == "jsonl" else [])]


class LineIndex:
    """Ordinals back to line numbers and byte offsets, from each block's count of lines and bytes
    (``(file, block start, lines, bytes)``, as one pass of Spark's text source counts them)."""

    def __init__(self, blocks: Iterable[tuple[int, int, int, int]]) -> None:
        per_file: dict[int, list[tuple[int, int, int]]] = {}
        for file, start, lines, size in blocks:
            per_file.setdefault(file, []).append((start, lines, size))
        # per file, blocks in order: (start, lines before it, offset of its first line)
        self._blocks: dict[int, list[tuple[int, int, int]]] = {}
        for file, found in per_file.items():
            lines = offset = 0
            ordered = []
            for start, n, size in sorted(found):
                ordered.append((start, lines, offset))  # every earlier line ends with its newline
                lines += n
                offset += size
            self._blocks[file] = ordered

    def _block(self, ordinal: int) -> tuple[int, int, tuple[int, int, int]]:
        file, pos = ordinal >> FILE_SHIFT, ordinal & ((1 << FILE_SHIFT) - 1)
        block = max((b for b in self._blocks[file] if 2 * b[0] <= pos), key=lambda b: b[0])
        return file, pos - 2 * block[0], block

    def line(self, ordinal: int) -> tuple[int, int]:
        """The file (its index) and 1-based line number of an ordinal."""
        file, idx, (_, before, _) = self._block(ordinal)
        return file, before + idx + 1

    def block_offset(self, ordinal: int) -> int:
        """The byte offset in its file of the first line of the ordinal's block."""
        return self._block(ordinal)[2][2]


def stream_schema(plan: LinePlan) -> str:
    """The Spark schema (DDL) of :func:`parse_lines`' output."""
    kinds = {"_kind": "tinyint", "_ord": "bigint", "_sub": "int"}
    return ", ".join(f"{name} {kinds.get(name, 'string')}" for name in plan.names)


def parse_lines(batches: Iterable[pa.RecordBatch], plan: LinePlan) -> Iterator[pa.RecordBatch]:
    """Token rows of the lines in ``batches`` (``value`` binary, ``file`` the file's index, ``file_block_start``),
    then the facts of any problem found."""
    blocks: dict[tuple[int, int], _Block] = {}
    facts = Facts()
    for batch in batches:
        frame = pl.DataFrame(pl.from_arrow(batch))
        if frame.height == 0:
            continue
        keys = frame.select(pl.struct("file", "file_block_start").rle_id().alias("g"))["g"]
        starts = (keys != keys.shift(1)).fill_null(True).arg_true().to_list()
        for a, b in zip(starts, [*starts[1:], frame.height], strict=True):
            part = frame.slice(a, b - a)
            file, start = int(part["file"][0]), int(part["file_block_start"][0])
            block = blocks.setdefault((file, start), _Block(file, start))
            out = (block.records(part["value"], facts) if plan.fmt == "jsonl"
                   else block.tokens(part["value"], plan.layout, facts, check_ranks=plan.check_ranks))
            if out is not None:
                yield out
    if facts.problems or facts.presence or facts.rank_runs:
        yield _facts_batch(facts, plan)


class _Block:
    """The lines of one block of one file, read in order across batches."""

    def __init__(self, file: int, start: int) -> None:
        self.base = (file << FILE_SHIFT) | (2 * start)
        self.first_block = start == 0
        self.lines = 0           # lines seen so far
        self.bytes = 0           # bytes seen so far (each line and its end)
        self.data_seen = False   # a data line seen (the header rule applies to a file's first one)

    def _positions(self, lines: pl.Series, facts: Facts) -> tuple[pl.Series, pl.Series, pl.Series] | None:
        """The lines (a BOM starting the file removed), their ordinals and byte offsets in the block; None for a
        gzip file Spark read as text."""
        n = len(lines)
        sizes = lines.bin.size().cast(pl.Int64) + 1
        ordinals = pl.int_range(self.lines, self.lines + n, eager=True, dtype=pl.Int64) + self.base
        starts = sizes.cum_sum().shift(1, fill_value=0) + self.bytes  # byte offset of each line in the block
        at_file_start = self.first_block and self.lines == 0
        self.lines += n
        self.bytes += int(sizes.sum())
        if at_file_start:
            first = lines[0]
            if first.startswith(COMPRESSIONS["gzip"]):
                facts.add_problem(Problem(
                    "line", "the file is gzip-compressed but its name does not end in .gz, and Spark decompresses "
                    "by name: rename it to end in .gz", int(ordinals[0])))
                return None
            if first.startswith(BOM):
                lines = pl.concat([pl.Series([first[3:]], dtype=pl.Binary), lines.slice(1)])
                starts = starts + pl.Series([3] + [0] * (n - 1), dtype=pl.Int64)
        return lines, ordinals, starts

    def records(self, lines: pl.Series, facts: Facts) -> pa.RecordBatch | None:
        """JSON Lines run records (:mod:`gainscope.io.jsonl`'s rules) as rows: one per document, ``_sub`` its
        place in its line."""
        positioned = self._positions(lines, facts)
        if positioned is None:
            return None
        lines, ordinals, starts = positioned
        lines, ordinals, starts = _usable(lines, ordinals, starts, facts, limit=MAX_RECORD_BYTES, lone_cr=False)
        rows = _Rows("run")
        origin = Origin(None, None)
        for raw, ordinal, start in zip(lines.to_list(), ordinals.to_list(), starts.to_list(), strict=True):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                facts.add_problem(Problem("line", "", ordinal, None, {
                    "raw": base64.b64encode(raw).decode("ascii"), "start": start}))
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                facts.add_problem(Problem("line", f"invalid JSON: {exc.msg} (column {exc.colno}); each line must "
                                          "hold one JSON object", ordinal, text.strip()))
                continue
            try:
                if not isinstance(record, Mapping):
                    raise origin.error(f"expected a JSON object; got {json_type(record)}", ordinal)
                _run_record(record, ordinal, rows, origin)
            except FormatError as exc:
                facts.add_problem(Problem("line", str(exc), exc.line, exc.text))
        if not rows.loc:
            return None
        frame = pl.DataFrame({"_ord": rows.loc}, schema={"_ord": pl.Int64})
        sub = frame.select((pl.int_range(pl.len()) - pl.int_range(pl.len()).min().over("_ord"))
                           .cast(pl.Int32))[:, 0]
        for role in ("score", "rank"):
            values = getattr(rows, role)
            given = [v is not None for v in values]
            for state, want in (("given", True), ("missing", False)):
                if want in given:
                    i = given.index(want)
                    facts.note_presence(role, state, (rows.loc[i], int(sub[i]), rows.query_id[i]))
        arrays = [pa.array([INPUT_KINDS["run"]] * len(rows.loc), pa.int8()), pa.array(rows.query_id, pa.string()),
                  pa.array(rows.doc_id, pa.string()), pa.array(rows.score, pa.string()),
                  pa.array(rows.rank, pa.string()), pa.array(rows.loc, pa.int64()), sub.to_arrow()]
        return pa.record_batch(arrays, names=LinePlan("jsonl").names)

    def tokens(self, lines: pl.Series, layout: Layout, facts: Facts, *,
               check_ranks: bool = False) -> pa.RecordBatch | None:
        """TREC or MS MARCO lines split into the reader's tokens (with ``check_ranks``, the rank runs of the
        lines recorded in ``facts``, see :func:`rank_runs`)."""
        positioned = self._positions(lines, facts)
        if positioned is None:
            return None
        lines, ordinals, starts = _usable(positioned[0], positioned[1], positioned[2], facts, limit=MAX_LINE_BYTES,
                                          lone_cr=True)
        try:
            text = lines.cast(pl.String)
        except pl.exceptions.ComputeError:
            text = _decoded(lines, lines.bin.starts_with(b"#"), ordinals, starts, facts)
        frame = (pl.DataFrame({"t": text, "_ord": ordinals})
                 .filter(~pl.col("t").str.starts_with("#"))
                 .with_columns(_tokenized(pl.col("t")))
                 .filter(pl.col("t") != "")
                 .select(pl.col("t").str.split(" ").alias("parts"), "_ord"))
        if frame.height == 0:
            return None
        if self.first_block and not self.data_seen:
            tokens = frame["parts"][0].to_list()
            if looks_like_header(tokens):
                facts.add_problem(Problem("line", header_message(layout, tokens), int(frame["_ord"][0]),
                                          " ".join(tokens)))
                frame = frame.slice(1)
        self.data_seen = True
        counts = frame["parts"].list.len()
        bad = (counts != layout.ncols) if layout.exact else (counts < layout.ncols)
        if bad.any():
            i = int(bad.arg_true()[0])
            tokens = frame["parts"][i].to_list()
            shown = " ".join(tokens)
            facts.add_problem(Problem("line", columns_message(layout, len(tokens), shown), int(frame["_ord"][i]),
                                      shown))
            frame = frame.filter(~bad)
        parts = frame["parts"]
        roles = [role for role, _ in layout.roles if role not in ("query_id", "doc_id")]
        index = dict(layout.roles)
        if check_ranks and frame.height:
            facts.rank_runs += rank_runs(parts.list.get(index["query_id"]), parts.list.get(index["rank"]),
                                         frame["_ord"])
        arrays = [pa.array([INPUT_KINDS["run"]] * frame.height, pa.int8())]
        arrays += [parts.list.get(index[r]).to_arrow().cast(pa.string()) for r in ("query_id", "doc_id", *roles)]
        arrays.append(frame["_ord"].to_arrow())
        return pa.record_batch(arrays, names=["_kind", "query_id", "doc_id", *roles, "_ord"])


def rank_runs(query_ids: pl.Series, ranks: pl.Series, ordinals: pl.Series) -> list[list[Any]]:
    """The runs of consecutive lines of one query among these data lines (in file order), for the check that a
    detected MS MARCO run has each query's ranks 1, 2, ..., n, its lines together
    (:func:`gainscope.io.trec.check_rank_sequences`; the driver finishes it, :func:`first_rank_problem`): each
    ``[first ordinal, query id, lines, first rank token, its integer or None, break]``, where ``break`` is
    ``[ordinal, token, k]`` for the first line ``k > 0`` of the run whose rank is not the first one's plus ``k``
    (None when there is none)."""
    frame = pl.DataFrame({"q": query_ids, "t": ranks, "o": ordinals}).with_columns(
        (pl.col("q") != pl.col("q").shift(1)).fill_null(True).cum_sum().alias("g"),
        pl.col("t").cast(pl.Int64, strict=False).alias("r"))  # as the reader's check casts the rank column
    frame = frame.with_columns(pl.int_range(pl.len()).over("g").alias("k"), pl.col("r").first().over("g").alias("r0"))
    frame = frame.with_columns(((pl.col("r") != pl.col("r0") + pl.col("k")).fill_null(True) & (pl.col("k") > 0))
                               .alias("bad"))
    runs = frame.group_by("g", maintain_order=True).agg(
        pl.col("o").first(), pl.col("q").first(), pl.len().alias("n"), pl.col("t").first(), pl.col("r0").first(),
        pl.col("o").filter(pl.col("bad")).first().alias("bo"), pl.col("t").filter(pl.col("bad")).first().alias("bt"),
        pl.col("k").filter(pl.col("bad")).first().alias("bk"))
    return [[o, q, n, t, r0, None if bo is None else [bo, bt, bk]]
            for _, o, q, n, t, r0, bo, bt, bk in runs.iter_rows()]


def first_rank_problem(runs: list[list[Any]]) -> tuple[int, str, str, int] | None:
    """The first line (ordinal, query id, rank token, the rank expected there; 0 when the query comes back after
    other queries) where the rank runs of every part of a detected MS MARCO run break the rule of
    :func:`gainscope.io.trec.check_rank_sequences`; None when they keep it. Runs of one query that follow each
    other in the file (cut by a block or a batch) are one run of its lines."""
    seen: set[str] = set()
    current: str | None = None
    expected = 1
    for ordinal, qid, count, token, first, cut in sorted(runs, key=lambda r: r[0]):
        if qid != current:
            if qid in seen:
                return ordinal, qid, token, 0
            seen.add(qid)
            current, expected = qid, 1
        if first != expected:
            return ordinal, qid, token, expected
        if cut is not None:
            return cut[0], qid, cut[1], expected + cut[2]
        expected += count
    return None


def _usable(lines: pl.Series, ordinals: pl.Series, starts: pl.Series, facts: Facts, *, limit: int,
            lone_cr: bool) -> tuple[pl.Series, pl.Series, pl.Series]:
    """The lines the readers go on to parse: a line longer than ``limit`` bytes is refused as
    :meth:`gainscope.io.text.TextFile.lines` refuses it, and (``lone_cr``, the TREC readers) a carriage return
    followed by more data on its line as the careful TREC parser does, comments included; both before any
    other check of the line."""
    bad = lines.bin.size() > limit
    if bad.any():
        i = int(bad.arg_true()[0])
        facts.add_problem(Problem("line", long_line_message(limit, lines[i][:limit + 1]), int(ordinals[i])))
    if lone_cr:
        with_cr = lines.bin.contains(b"\r") & ~bad
        if with_cr.any():
            lone = pl.Series([bool(LONE_CR.search(raw)) if has else False
                              for raw, has in zip(lines.to_list(), with_cr.to_list(), strict=True)])
            if lone.any():
                i = int(lone.arg_true()[0])
                facts.add_problem(Problem("line", LONE_CR_MESSAGE, int(ordinals[i]),
                                          show((lines[i] + b"\n").decode("utf-8", "replace"))))  # as read
            bad = bad | lone
    if not bad.any():
        return lines, ordinals, starts
    keep = ~bad
    return lines.filter(keep), ordinals.filter(keep), starts.filter(keep)


def _tokenized(line: pl.Expr) -> pl.Expr:
    """Fields separated by one space, none at the ends: lines already so stay as they are (literal searches,
    fast); others are rewritten with the whitespace class of the reader's tokenizer."""
    messy = line.str.starts_with(" ") | line.str.ends_with(" ")
    for chars in ("  ", "\t", "\r", "\x0b", "\x0c"):
        messy = messy | line.str.contains(chars, literal=True)
    return pl.when(messy).then(line.str.replace_all(_WS, " ").str.strip_chars(" ")).otherwise(line)


def _decoded(lines: pl.Series, comment: pl.Series, ordinals: pl.Series, starts: pl.Series,
             facts: Facts) -> pl.Series:
    """The lines as text; a data line that is not UTF-8 becomes a blank line, and the first is a problem
    (comment lines are never decoded, as the reader does not)."""
    out: list[str] = []
    skip = comment.to_list()
    for i, raw in enumerate(lines.to_list()):
        if skip[i]:
            out.append("")
            continue
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            out.append("")
            facts.add_problem(Problem("line", "", int(ordinals[i]), None, {
                "raw": base64.b64encode(raw).decode("ascii"), "start": int(starts[i])}))
    return pl.Series(out, dtype=pl.String)


def _facts_batch(facts: Facts, plan: LinePlan) -> pa.RecordBatch:
    arrays = [pa.array([INPUT_KINDS["facts"]], pa.int8()), pa.array([None], pa.string()),
              pa.array([facts.to_json()], pa.string()), *(pa.array([None], pa.string()) for _ in plan.roles),
              pa.array([None], pa.int64())]
    if plan.fmt == "jsonl":
        arrays.append(pa.array([None], pa.int32()))
    return pa.record_batch(arrays, names=plan.names)
