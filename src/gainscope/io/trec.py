"""TREC qrels and runs, 3-column qrels and MS MARCO runs: a fast reader and a careful one, same results.

Line rules (those of trec_eval 10, except where it silently corrupts data):

* A line ends at ``\\n`` and is split at runs of ASCII whitespace (space, tab, CR, VT, FF), exactly like
  trec_eval's tokenizer; ids therefore never contain whitespace and there is no quoting. Leading and
  trailing whitespace, CRLF endings, tabs and mixed runs of spaces and tabs are accepted silently. A CR
  followed by more data on the same line is an error (a file whose lines end with CR alone would
  otherwise be read as one line), and so is a line longer than
  :data:`~gainscope.io.text.MAX_LINE_BYTES` (1 MiB).
* Blank lines are skipped. A line whose **first byte** is ``#`` (after a BOM on line 1) is a comment;
  ``#`` anywhere else is data, so doc ids such as ``msmarco_v2.1_doc_00_0#0_1`` work. An indented ``#``
  line is data too, and then fails the column check with a clear message.
* ``format="trec"`` qrels: exactly 4 columns ``query_id iteration doc_id relevance`` (the iteration
  column is ignored). ``format="qrels3"``: exactly 3 columns ``query_id doc_id relevance``.
* ``format="trec"`` runs: exactly 6 columns ``query_id Q0 doc_id rank score run_tag``. trec_eval ignores
  columns after the tag; here they are an error, as they usually mean a shifted or merged line, unless
  ``extra_columns="ignore"`` says they are notes to ignore (trec_eval's own test run has some). The rank
  column is kept (``rank``) and checked to be an integer; the run's name is the tag of the first line,
  with a warning when tags differ. ``format="msmarco"``: exactly 3 columns ``query_id doc_id rank`` (no
  scores; the order is given by the rank).
* Ids (and run tags) holding a control character (C0 such as NUL, DEL, C1) are an error naming the line
  (checked by :mod:`gainscope.io.frames` for every source).
* A header row (``query-id corpus-id score``, ``qid docno rel``...) is refused with a message naming
  the right ``format=``. Values are checked by :mod:`gainscope.io.frames` (integers, numbers, NaN...).

Two parsers produce the same token table:

1. **Fast** (files of :data:`FAST_MIN_BYTES` or more): polars ``read_csv`` with no header, no quoting,
   ``#`` comments and the separator of the first data line (tab, else space), every column read as text,
   once a pass over the bytes has found no lone CR, no line beyond the length limit and a first data line
   with the format's number of columns (or a few more when they are ignored), so that a line of a million
   columns never becomes a million polars columns.
   The fields are then checked with vectorised expressions (no empty field, no whitespace inside an id);
   if anything is off, whitespace is normalised with C-speed ``re.sub`` over the bytes and polars
   tries again. No Python object is built per row; duplicates are found with ``is_duplicated``.
2. **Careful**: a line-by-line Python parser that knows line numbers. It reads small files, and any file
   where the fast reader found a problem, so that every error names its line. It is the reference that
   the tests compare the fast reader against.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from gainscope.core.judgments import Judgments
from gainscope.core.run import Run
from gainscope.deferred import deferred_module
from gainscope.errors import FormatError, PolicyError, option
from gainscope.io.detect import format_option, not_ranks_error
from gainscope.io.frames import (
    ALIASES,
    JudgmentOptions,
    NeedLocations,
    Origin,
    RunOptions,
    TokenTable,
    finish_judgments,
    finish_run,
)
from gainscope.io.text import BOM, HEAD_BYTES, MAX_LINE_BYTES, LineTooLong, TextFile, is_comment

if TYPE_CHECKING:
    import polars as pl
else:
    pl = deferred_module("polars")

__all__ = [
    "FAST_MIN_BYTES",
    "LAYOUTS",
    "FastPathUnavailable",
    "Layout",
    "LineProblem",
    "LineStats",
    "careful_table",
    "check_rank_sequences",
    "fast_table",
    "normalise_whitespace",
    "read_trec_judgments",
    "read_trec_run",
]

_T = TypeVar("_T")

FAST_MIN_BYTES = 2_000_000
CHUNK_LINES = 500_000
_WS_CLASS = r"[ \t\r\x0B\x0C]"
_FIELD_STRIP = " \t\r\x0b\x0c"


@dataclass(frozen=True)
class Layout:
    """One line-based format: how many columns, which column holds which role."""

    fmt: str
    kind: str
    ncols: int
    exact: bool
    roles: tuple[tuple[str, int], ...]
    columns: str

    @property
    def tag_index(self) -> int | None:
        """The column of the run tag, if the format has one."""
        return dict(self.roles).get("tag")


LAYOUTS: dict[tuple[str, str], Layout] = {
    ("judgments", "trec"): Layout("trec", "judgments", 4, True,
                                  (("query_id", 0), ("doc_id", 2), ("grade", 3)),
                                  "query_id iteration doc_id relevance"),
    ("judgments", "qrels3"): Layout("qrels3", "judgments", 3, True,
                                    (("query_id", 0), ("doc_id", 1), ("grade", 2)),
                                    "query_id doc_id relevance"),
    ("run", "trec"): Layout("trec", "run", 6, True,
                            (("query_id", 0), ("doc_id", 2), ("rank", 3), ("score", 4), ("tag", 5)),
                            "query_id Q0 doc_id rank score run_tag"),
    ("run", "msmarco"): Layout("msmarco", "run", 3, True,
                               (("query_id", 0), ("doc_id", 1), ("rank", 2)),
                               "query_id doc_id rank"),
}


class FastPathUnavailable(Exception):
    """The fast reader could not read this file on its own (tests force it to check it really runs)."""


@dataclass
class LineStats:
    """What the careful parser counted besides data: physical lines, blank lines, comments, a BOM."""

    lines: int = 0
    blank: int = 0
    comments: int = 0
    bom: bool = False


@dataclass
class LineProblem:
    """A line the careful parser could not use (collected instead of raised by the validator)."""

    line: int
    code: str
    message: str
    text: str | None = None


@dataclass
class _Collector:
    stats: LineStats = field(default_factory=LineStats)
    problems: list[LineProblem] | None = None

    def report(self, exc: FormatError, code: str) -> None:
        if self.problems is None:
            raise exc
        message = str(exc)
        prefix = f"{exc.path}:{exc.line}: "
        self.problems.append(LineProblem(exc.line or 0, code, message.removeprefix(prefix), exc.text))


# ---------------------------------------------------------------------- messages
_HEADER_WORDS = {a for names in ALIASES.values() for a in names} | {
    "iter", "iteration", "q0", "tag", "run", "run_tag", "runid", "run_id", "system", "name"}
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


def _show(text: str, limit: int = 100) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _looks_like_header(tokens: list[str]) -> bool:
    lowered = [t.lower() for t in tokens]
    if any(_NUMBER.match(t) for t in lowered):
        return False
    return sum(t in _HEADER_WORDS for t in lowered) >= 2


def _header_message(layout: Layout, tokens: list[str]) -> str:
    beir = [t.lower() for t in tokens] == ["query-id", "corpus-id", "score"]
    name = "qrels" if layout.kind == "judgments" else "run"
    fix = (f"read it with {format_option('beir', layout.kind)}" if beir and layout.kind == "judgments"
           else f"delete it, or read the file as a table with {format_option('tsv', layout.kind)} or "
                f"{format_option('csv', layout.kind)}")
    what = "a BEIR qrels header" if beir else "a header row"
    return f"this looks like {what} ({' '.join(tokens)}); TREC {name} files have none: {fix}"


def _columns_message(layout: Layout, count: int, text: str) -> str:
    message = (f"expected {layout.ncols} whitespace-separated columns ({layout.columns}); "
               f"got {count}: {_show(text)}")
    return message + _columns_hint(layout, count)


def _columns_hint(layout: Layout, count: int) -> str:
    hints = {
        ("run", "trec", 5): "; the run tag column seems missing: add a run name as the 6th column of "
                            "every line",
        ("run", "trec", 4): "; this looks like a qrels line (query_id iteration doc_id relevance)",
        ("run", "trec", 3): "; for MS MARCO runs (query_id doc_id rank) read with "
                            f"{format_option('msmarco', 'run')}",
        ("judgments", "trec", 3): "; for 3-column qrels (query_id doc_id relevance) read with "
                                  f"{format_option('qrels3', 'judgments')}",
        ("judgments", "qrels3", 4): f"; for 4-column TREC qrels read with {format_option('trec', 'judgments')}",
    }
    hint = hints.get((layout.kind, layout.fmt, count), "")
    if not hint and layout.kind == "judgments" and count >= 6:
        hint = "; this looks like a run line (query_id Q0 doc_id rank score run_tag)"
    if not hint and layout.fmt == "msmarco" and count >= 6:
        hint = f"; this looks like a TREC run: read with {format_option('trec', 'run')}"
    if not hint and count > layout.ncols:
        hint = (f"; remove the columns after the {ordinal(layout.ncols)} (an id with a space in it, or two lines "
                f"run together?)")
        if (layout.kind, layout.fmt) == ("run", "trec"):
            hint += (f", or, if they are notes after the run tag (trec_eval ignores them), read with "
                     f"{option('extra_columns', 'ignore')}")
    return hint


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ---------------------------------------------------------------------- careful parser
def careful_table(src: TextFile, layout: Layout, *, stats: LineStats | None = None,
                  problems: list[LineProblem] | None = None) -> TokenTable:
    """Parse line by line (the reference parser); every row keeps its line number in ``_loc``.

    With ``problems`` given, unusable lines are recorded there and skipped instead of raising.
    """
    collector = _Collector(stats or LineStats(), problems)
    collector.stats.bom = src.has_bom()
    roles = layout.roles
    columns: dict[str, list[str]] = {role: [] for role, _ in roles}
    locs: list[int] = []
    chunks: list[pl.DataFrame] = []
    first_data = True
    for lineno, offset, raw in src.lines():
        collector.stats.lines += 1
        if b"\r" in raw and _LONE_CR.search(raw):
            collector.report(FormatError(_LONE_CR_MESSAGE, path=src.name, line=lineno,
                                         text=_show(raw.decode("utf-8", "replace"))), "lone-cr")
            continue
        if is_comment(raw):
            collector.stats.comments += 1
            continue
        parts = raw.split()
        if not parts:
            collector.stats.blank += 1
            continue
        tokens = _decode_tokens(src, raw, parts, lineno, offset, collector)
        if tokens is None:
            continue
        if first_data:
            first_data = False
            if _looks_like_header(tokens):
                collector.report(FormatError(_header_message(layout, tokens), path=src.name, line=lineno,
                                             text=" ".join(tokens)), "header-row")
                continue
        count = len(tokens)
        if count < layout.ncols or (layout.exact and count != layout.ncols):
            text = " ".join(tokens)
            collector.report(FormatError(_columns_message(layout, count, text), path=src.name, line=lineno,
                                         text=text), "bad-columns")
            continue
        for role, index in roles:
            columns[role].append(tokens[index])
        locs.append(lineno)
        if len(locs) >= CHUNK_LINES:
            chunks.append(_chunk(columns, locs))
            columns = {role: [] for role, _ in roles}
            locs = []
    chunks.append(_chunk(columns, locs))
    frame = pl.concat(chunks, how="vertical") if len(chunks) > 1 else chunks[0]
    return TokenTable(frame, Origin(src.name, "line"), tokens_clean=True)


_LONE_CR = re.compile(rb"\r[ \t\r\x0b\x0c]*[^ \t\r\x0b\x0c\n]")
_LONE_CR_MESSAGE = ("a carriage return (\\r) followed by more data on the same line: lines must end with \\n (or "
                    "\\r\\n); if the file's lines end with \\r alone (old Mac line ends), convert them to \\n")


def _decode_tokens(src: TextFile, raw: bytes, parts: list[bytes], lineno: int, offset: int,
                   collector: _Collector) -> list[str] | None:
    if raw.isascii():
        return [p.decode("ascii") for p in parts]
    try:
        src.decode_line(raw, lineno, offset)
    except FormatError as exc:
        collector.report(exc, "encoding")
        return None
    return [p.decode("utf-8") for p in parts]


def _chunk(columns: dict[str, list[str]], locs: list[int]) -> pl.DataFrame:
    data: dict[str, pl.Series] = {role: pl.Series(role, values, dtype=pl.String)
                                  for role, values in columns.items()}
    data["_loc"] = pl.Series("_loc", locs, dtype=pl.Int64)
    return pl.DataFrame(data)


# ---------------------------------------------------------------------- fast parser
_INDENTED_HASH = re.compile(rb"(?m)^[ \t\r\x0b\x0c]+#")
_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")


def fast_table(src: TextFile, layout: Layout) -> TokenTable | None:
    """Read with polars; None when the file needs the careful parser (messy, malformed or a header).

    First one pass over the bytes counts the lines that are not comments and looks for what only the careful
    parser reports (a lone CR, a line beyond the length limit); the first data line must have the format's
    number of columns. Besides checking every field, the number of rows polars returns must equal that count:
    a guard against any difference in how comment lines are recognised.
    """
    head = src.head()
    full = len(head) >= HEAD_BYTES
    if head.startswith(BOM):
        head = head[3:]
    first = _first_non_comment_line(head)
    first_data = next((line for line in head.split(b"\n") if line.strip() and not line.startswith(b"#")), None)
    if first_data is not None and full and head.endswith(first_data):
        return None  # the first data line may go on beyond the head: the careful parser reads it
    if first_data is not None and (_looks_like_header(first_data.decode("utf-8", "replace").split())
                                   or not layout.ncols <= len(first_data.split()) <= _widest(layout)):
        return None
    try:
        count = data_line_count(_without_lone_cr(src.chunks()))
    except (LineTooLong, _LoneCR):
        return None
    separator = "\t" if first is not None and b"\t" in first else " "
    table = None
    if first is not None and _is_clean(first, separator):
        frame = _polars_read(src.polars_source(), layout, separator)
        if frame is not None and frame.height == count:
            table = _checked(frame, layout, src)
    if table is None:
        try:
            data = normalise_whitespace(src.chunks())
        except LineTooLong:
            return None
        if data is None:
            return None
        frame = _polars_read(data, layout, " ")
        if frame is None or frame.height != data_line_count([data]):
            return None
        table = _checked(frame, layout, src)
    return table


def _widest(layout: Layout) -> int:
    """The most columns a first line may have for polars (which makes one column per field of it): the
    format's, or a few notes after the run tag when they are ignored."""
    return layout.ncols if layout.exact else layout.ncols + 16


class _LoneCR(Exception):
    """A CR followed by data on its line, found by the fast reader's first pass."""


def _without_lone_cr(chunks: Iterable[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        if b"\r" in chunk and _LONE_CR.search(chunk):
            raise _LoneCR
        yield chunk


def data_line_count(chunks: Iterable[bytes]) -> int:
    """Lines that are not comments (blank lines included) in pieces cut at line ends: C-speed counts."""
    lines = comments = 0
    last = b""
    for i, chunk in enumerate(chunks):
        if i == 0 and chunk.startswith(BOM):
            chunk = chunk[3:]
        if not chunk:
            continue
        lines += chunk.count(b"\n")
        comments += chunk.count(b"\n#") + chunk.startswith(b"#")
        last = chunk
    if last and not last.endswith(b"\n"):
        lines += 1
    return lines - comments


def _first_non_comment_line(head: bytes) -> bytes | None:
    for line in head.split(b"\n"):
        if not line.startswith(b"#"):
            return line
    return None


def _is_clean(line: bytes, separator: str) -> bool:
    """True when polars will see the same fields as the tokenizer on this line (width inference)."""
    body = line[:-1] if line.endswith(b"\r") else line
    return bool(body) and body.split(separator.encode()) == body.split()


def normalise_whitespace(chunks: Iterable[bytes] | bytes) -> bytes | None:
    """One space between fields, none at line ends, no blank lines; None if an indented ``#`` exists.

    ``chunks`` are pieces of the file cut at line ends (or the whole content). Each piece goes through
    C-speed byte operations only (``translate``, ``replace``), and only the normalised copy is kept.
    """
    pieces = [chunks] if isinstance(chunks, bytes) else chunks
    out: list[bytes] = []
    for i, chunk in enumerate(pieces):
        if i == 0 and chunk.startswith(BOM):
            chunk = chunk[3:]
        if _INDENTED_HASH.search(chunk):
            return None
        out.append(_normalise_piece(chunk))
    data = b"".join(out)
    # polars 2.1 raises on a one-line file without final newline whose first field has '#' at index 1
    return data + b"\n" if data and not data.endswith(b"\n") else data


def _normalise_piece(chunk: bytes) -> bytes:
    chunk = chunk.translate(_TO_SPACE)
    while b"  " in chunk:
        chunk = chunk.replace(b"  ", b" ")
    chunk = chunk.replace(b" \n", b"\n").replace(b"\n ", b"\n")
    while b"\n\n" in chunk:
        chunk = chunk.replace(b"\n\n", b"\n")
    return chunk.strip(b" ").lstrip(b"\n")


def _polars_read(source: str | bytes, layout: Layout, separator: str) -> pl.DataFrame | None:
    try:
        return pl.read_csv(source, has_header=False, separator=separator, quote_char=None, comment_prefix="#",
                           infer_schema=False, truncate_ragged_lines=not layout.exact, raise_if_empty=False,
                           encoding="utf8", eol_char="\n")
    except (pl.exceptions.PolarsError, OSError):
        return None


def _checked(frame: pl.DataFrame | None, layout: Layout, src: TextFile) -> TokenTable | None:
    """The token table of a polars read, or None when any field differs from what the tokenizer sees."""
    if frame is None:
        return None
    origin = Origin(src.name, "line")
    if frame.height == 0 or frame.width == 0:
        empty = pl.DataFrame(schema={role: pl.String for role, _ in layout.roles})
        return TokenTable(empty, origin, tokens_clean=True)
    if frame.width < layout.ncols:
        return None
    names = frame.columns
    frame = frame.filter(~pl.all_horizontal(pl.all().is_null()))
    if layout.exact and any(frame.get_column(n).null_count() < frame.height for n in names[layout.ncols:]):
        return None
    fields: dict[int, pl.Series] = {}
    for index in range(layout.ncols):
        field_ = _field(frame.get_column(names[index]), is_tag=index == layout.tag_index)
        if field_ is None:
            return None
        fields[index] = field_
    longest = pl.DataFrame(list(fields.values())).select(
        pl.sum_horizontal(pl.all().str.len_bytes()).max()).item()
    if longest is not None and longest + layout.ncols - 1 > MAX_LINE_BYTES:
        return None  # a line beyond the limit: the careful parser names it
    columns = [fields[index].alias(role) for role, index in layout.roles]
    return TokenTable(pl.DataFrame(columns), origin, tokens_clean=True)


_TOKEN = r"^[^ \t\r\x0B\x0C]+$"
_FIRST_TOKEN = r"^([^ \t\r\x0B\x0C]+)"


def _all(mask: pl.Series) -> bool:
    return bool(mask.fill_null(False).all())


def _field(column: pl.Series, *, is_tag: bool) -> pl.Series | None:
    """One column as the tokenizer would see it, or None when it would split or shift the fields.

    The common case (every field already a single token) costs one regular-expression pass.
    """
    if _all(column.str.contains(_TOKEN)):
        return column
    stripped = column.str.strip_chars(_FIELD_STRIP)
    if is_tag:
        token = stripped.str.extract(_FIRST_TOKEN, 1)
        return token if token.null_count() == 0 else None
    return stripped if _all(stripped.str.contains(_TOKEN)) else None


# ---------------------------------------------------------------------- reading
def _table(src: TextFile, layout: Layout, engine: str, finish: Callable[[TokenTable], _T]) -> _T:
    """Run ``finish`` on the fast reader's table when possible, else on the careful parser's."""
    if engine not in ("auto", "fast", "careful"):
        raise PolicyError(f"engine must be 'auto', 'fast' or 'careful'; got {engine!r}")
    size = src.size * (4 if src.compression else 1)  # roughly the text size of a compressed file
    if engine == "fast" or (engine == "auto" and size >= FAST_MIN_BYTES):
        table = fast_table(src, layout)
        if table is not None:
            try:
                return finish(table)
            except NeedLocations:
                pass
        if engine == "fast":
            raise FastPathUnavailable(f"{src.name}: the fast reader could not read this file alone")
    return finish(careful_table(src, layout))


def check_rank_sequences(table: TokenTable, name: str) -> None:
    """Refuse a detected MS MARCO run unless each query's rank column is 1, 2, ..., n in order, its lines
    together (the evidence detection saw in the first lines, checked on every line)."""
    frame = table.frame
    group = (pl.col("query_id") != pl.col("query_id").shift(1)).fill_null(True).cum_sum()
    expected = pl.int_range(1, pl.len() + 1).over(group)
    checked = frame.with_columns(group.alias("_g"), expected.alias("_want"),
                                 pl.col("rank").cast(pl.Int64, strict=False).alias("_r"))
    comes_back = pl.col("_g") != pl.col("_g").first().over("query_id")
    bad = checked.filter(comes_back | (pl.col("_r") != pl.col("_want")).fill_null(True))
    if not bad.height:
        return
    if "_loc" not in frame.columns:
        raise NeedLocations
    row = bad.row(0, named=True)
    want = 0 if row["_g"] != checked.filter(pl.col("query_id") == row["query_id"])["_g"][0] else row["_want"]
    raise not_ranks_error(name, row["_loc"], row["query_id"], row["rank"], want)


def read_trec_judgments(src: TextFile, fmt: str, opts: JudgmentOptions, *, engine: str = "auto",
                        notes: Sequence[str] = ()) -> tuple[Judgments, list[str]]:
    """Read TREC (``fmt="trec"``) or 3-column (``"qrels3"``) qrels; returns them and the warnings to emit.

    ``engine``: ``"auto"`` (fast reader for large files, careful otherwise and on any problem),
    ``"careful"``, or ``"fast"`` (fast reader only; raises FastPathUnavailable instead of falling back).
    ``notes`` are added to the object's notes (what the caller detected).
    """
    def finish(table: TokenTable) -> tuple[Judgments, list[str]]:
        table.notes.extend(notes)
        return finish_judgments(table, opts)

    return _table(src, LAYOUTS[("judgments", fmt)], engine, finish)


def read_trec_run(src: TextFile, fmt: str, opts: RunOptions, *, engine: str = "auto",
                  notes: Sequence[str] = (), check_ranks: bool = False) -> tuple[Run, list[str]]:
    """Read a TREC (``fmt="trec"``) or MS MARCO (``"msmarco"``) run; same options as for qrels.

    ``check_ranks`` (an MS MARCO format that was detected, not given): every query's rank column must be its
    rank sequence 1, 2, ..., n in order, else the format is refused (see :mod:`gainscope.io.detect`)."""
    default_name = src.stem if fmt == "msmarco" else None

    def finish(table: TokenTable) -> tuple[Run, list[str]]:
        table.default_name = default_name
        table.notes.extend(notes)
        if check_ranks:
            check_rank_sequences(table, src.name)
        return finish_run(table, opts)

    layout = LAYOUTS[("run", fmt)]
    if fmt == "trec" and opts.extra_columns == "ignore":
        layout = dataclasses.replace(layout, exact=False)
    return _table(src, layout, engine, finish)
