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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from gainscope.io.text import BOM, GZIP_MAGIC
from gainscope.io.trec import LAYOUTS, Layout
from gainscope.io.trec import _columns_message as columns_message  # the TREC reader's own messages
from gainscope.io.trec import _header_message as header_message
from gainscope.io.trec import _looks_like_header as looks_like_header
from gainscope.spark.facts import Facts, Problem
from gainscope.spark.partition import INPUT_KINDS

__all__ = ["FILE_SHIFT", "LinePlan", "normal_uri", "parse_lines", "stream_schema"]

FILE_SHIFT = 44
_WS = r"[ \t\r\x0B\x0C]+"


def normal_uri(uri: str) -> str:
    """One spelling of a file URI (Spark writes ``file:/x`` in metadata and ``file:///x`` in listings)."""
    if uri.startswith("file:"):
        return "file://" + "/" + uri[5:].lstrip("/")
    return uri


@dataclass(frozen=True)
class LinePlan:
    """How to read the lines of one run input: the format's layout and the index of each file."""

    fmt: str
    files: dict[str, int]

    @property
    def layout(self) -> Layout:
        return LAYOUTS[("run", self.fmt)]


def stream_schema(plan: LinePlan) -> str:
    """The Spark schema (DDL) of :func:`parse_lines`' output."""
    roles = [role for role, _ in plan.layout.roles if role not in ("query_id", "doc_id")]
    return ", ".join(["_kind tinyint", "query_id string", "doc_id string", *(f"{r} string" for r in roles),
                      "_ord bigint"])


def parse_lines(batches: Iterable[pa.RecordBatch], plan: LinePlan) -> Iterator[pa.RecordBatch]:
    """Token rows of the lines in ``batches`` (``value`` binary, ``file_path``, ``file_block_start``), then
    the facts of any problem found."""
    blocks: dict[tuple[str, int], _Block] = {}
    facts = Facts()
    for batch in batches:
        frame = pl.DataFrame(pl.from_arrow(batch))
        if frame.height == 0:
            continue
        keys = frame.select(pl.struct("file_path", "file_block_start").rle_id().alias("g"))["g"]
        starts = (keys != keys.shift(1)).fill_null(True).arg_true().to_list()
        for a, b in zip(starts, [*starts[1:], frame.height], strict=True):
            part = frame.slice(a, b - a)
            file, start = part["file_path"][0], int(part["file_block_start"][0])
            block = blocks.setdefault((file, start), _Block(plan.files[normal_uri(file)], start))
            out = block.tokens(part["value"], plan.layout, facts)
            if out is not None:
                yield out
    if facts.problems:
        yield _facts_batch(facts, plan)


class _Block:
    """The lines of one block of one file, read in order across batches."""

    def __init__(self, file: int, start: int) -> None:
        self.base = (file << FILE_SHIFT) | (2 * start)
        self.first_block = start == 0
        self.lines = 0           # lines seen so far
        self.bytes = 0           # bytes seen so far (each line and its end)
        self.data_seen = False   # a data line seen (the header rule applies to a file's first one)

    def tokens(self, lines: pl.Series, layout: Layout, facts: Facts) -> pa.RecordBatch | None:
        n = len(lines)
        sizes = lines.bin.size().cast(pl.Int64) + 1
        ordinals = pl.int_range(self.lines, self.lines + n, eager=True, dtype=pl.Int64) + self.base
        starts = sizes.cum_sum().shift(1, fill_value=0) + self.bytes  # byte offset of each line in the block
        at_file_start = self.first_block and self.lines == 0
        self.lines += n
        self.bytes += int(sizes.sum())
        if at_file_start:
            first = lines[0]
            if first.startswith(GZIP_MAGIC):
                facts.add_problem(Problem(
                    "line", "the file is gzip-compressed but its name does not end in .gz, and Spark decompresses "
                    "by name: rename it to end in .gz", int(ordinals[0])))
                return None
            if first.startswith(BOM):
                lines = pl.concat([pl.Series([first[3:]], dtype=pl.Binary), lines.slice(1)])
                starts = starts + pl.Series([3] + [0] * (n - 1), dtype=pl.Int64)
        comment = lines.bin.starts_with(b"#")
        try:
            text = lines.cast(pl.String)
        except pl.exceptions.ComputeError:
            text = _decoded(lines, comment, ordinals, starts, facts)
        frame = (pl.DataFrame({"t": text.str.replace_all(_WS, " ").str.strip_chars(" "), "comment": comment,
                               "_ord": ordinals})
                 .filter(~pl.col("comment") & (pl.col("t") != ""))
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
        arrays = [pa.array([INPUT_KINDS["run"]] * frame.height, pa.int8())]
        arrays += [parts.list.get(index[r]).to_arrow().cast(pa.string()) for r in ("query_id", "doc_id", *roles)]
        arrays.append(frame["_ord"].to_arrow())
        return pa.record_batch(arrays, names=["_kind", "query_id", "doc_id", *roles, "_ord"])


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
    roles = [r for r, _ in plan.layout.roles if r not in ("query_id", "doc_id")]
    names = ["_kind", "query_id", "doc_id", *roles, "_ord"]
    arrays = [pa.array([INPUT_KINDS["facts"]], pa.int8()), pa.array([None], pa.string()),
              pa.array([facts.to_json()], pa.string()), *(pa.array([None], pa.string()) for _ in roles),
              pa.array([None], pa.int64())]
    return pa.record_batch(arrays, names=names)
