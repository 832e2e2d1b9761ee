"""Which format a file is in, from its extension and its first lines; ``format=`` always wins.

Format names: judgments ``trec``, ``qrels3``, ``jsonl``, ``json``, ``csv``, ``tsv``, ``beir``, ``parquet``;
runs ``trec``, ``msmarco``, ``jsonl``, ``json``, ``csv``, ``tsv``, ``parquet``. Any other name is an
:class:`~gainscope.errors.UnknownFormatError` listing the valid ones (``None`` or ``"auto"`` detects).

Detection (a ``.gz`` suffix is looked through, and so is gzip content):

1. Parquet content (``PAR1`` magic) or a ``.parquet``/``.pq`` name → ``parquet``.
2. ``.jsonl``/``.ndjson`` → ``jsonl``; ``.json`` → ``json``, or ``jsonl`` when the content is one object
   per line. Without those extensions, content starting with ``[`` → ``json`` and ``{`` → ``jsonl``.
3. ``.csv`` → ``csv``; ``.tsv`` → ``tsv`` (``beir`` for judgments whose header is
   ``query-id corpus-id score``).
4. Anything else is looked at: comment (``#`` at column 0) and blank lines are skipped and the first
   data line decides. A header row → ``beir``/``tsv``/``csv`` by its names and separator. Otherwise the
   number of whitespace-separated columns: judgments with 3 columns and an integer last column →
   ``qrels3``; everything else → ``trec`` (whose reader then explains what is wrong with the line).
   A run with 3 columns is ``msmarco`` only on unambiguous evidence: in every line read, each query's
   third column is its rank sequence 1, 2, ..., n in order (the reader then checks the whole file). Any
   other 3-column run (``q1 d1 30``, ``q1 d2 20``: scores, or ranks out of order) is refused with an
   :class:`~gainscope.errors.UnknownFormatError` naming ``format=``: reading scores as ranks would reverse
   the order silently.

:func:`guess_kind` tells judgments from runs for the validator.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from gainscope.errors import PolicyError, UnknownFormatError, option
from gainscope.io.frames import ALIASES
from gainscope.io.text import BOM, HEAD_BYTES, TextFile

__all__ = ["FORMATS", "KINDS", "check_format", "detect_format", "detect_head_format", "detect_text_format",
           "format_option", "guess_kind", "not_ranks_error", "rank_sequence_problem"]

FORMATS: dict[str, tuple[str, ...]] = {
    "judgments": ("trec", "qrels3", "jsonl", "json", "csv", "tsv", "beir", "parquet"),
    "run": ("trec", "msmarco", "jsonl", "json", "csv", "tsv", "parquet"),
}
KINDS = tuple(FORMATS)
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
               ".parquet": "parquet", ".pq": "parquet"}
_BEIR_HEADER = ["query-id", "corpus-id", "score"]
_HEADER_WORDS = {a for names in ALIASES.values() for a in names}
_INT = re.compile(r"^[+-]?[0-9]+$")
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


def check_kind(kind: str) -> str:
    """Validate ``kind``: ``"judgments"`` or ``"run"``."""
    if kind not in FORMATS:
        raise PolicyError(f"kind must be 'judgments' or 'run'; got {kind!r}")
    return kind


def check_format(fmt: str | None, kind: str) -> str | None:
    """Validate a ``format=`` value for ``kind``; None (or ``"auto"``) means detect."""
    check_kind(kind)
    if fmt is None or fmt == "auto":
        return None
    valid = FORMATS[kind]
    if not isinstance(fmt, str) or fmt.lower() not in valid:
        what = "judgments" if kind == "judgments" else "runs"
        raise UnknownFormatError(f"unknown format {fmt!r} for {what}; valid formats: {', '.join(valid)} "
                                 f"(or None to detect it)")
    return fmt.lower()


def format_option(fmt: str, kind: str) -> str:
    """``format='msmarco'`` in Python, ``--run-format msmarco`` (or ``--judgments-format``) on the command
    line: the fix that names a format, for a message (see :func:`gainscope.errors.option`)."""
    flag = "--run-format" if kind == "run" else "--judgments-format"
    return option("format", fmt, cli=f"{flag} {fmt}")


def detect_format(path: str | os.PathLike[str], *, kind: str) -> str:
    """The format of the file at ``path`` read as ``kind`` (``"judgments"`` or ``"run"``)."""
    check_kind(kind)
    return detect_text_format(TextFile(path), kind)


def detect_text_format(src: TextFile, kind: str) -> str:
    """:func:`detect_format` for an opened :class:`~gainscope.io.text.TextFile`."""
    return detect_head_format(src.head(), src.suffix, kind, src.name)


def detect_head_format(head: bytes, suffix: str, kind: str, name: str) -> str:
    """The format of a file named ``name`` (in messages) whose first bytes are ``head`` and whose lower-case
    extension (``.gz`` looked through) is ``suffix``; for files that are not opened here (read by Spark, for
    example)."""
    if head.startswith(b"PAR1"):
        return "parquet"
    by_name = _EXTENSIONS.get(suffix)
    if head.startswith(BOM):
        head = head[3:]
    if by_name == "json":
        return "jsonl" if _is_json_lines(head) else "json"
    if by_name in ("csv", "tsv"):
        line = _first_data_line(head)
        if line is not None and _looks_like_trec(line, kind):
            return _sniff(head, kind, name)  # MS MARCO ships headerless TREC-style .tsv files
        if by_name == "tsv" and kind == "judgments" and _first_tokens(head, "\t") == _BEIR_HEADER:
            return "beir"
    if by_name is not None:
        return by_name
    return _sniff(head, kind, name)


def _looks_like_trec(line: str, kind: str) -> bool:
    """True for a whitespace-separated data line of a TREC, 3-column qrels or MS MARCO file."""
    tokens = line.split()
    if len(tokens) == 3:
        return bool(_INT.match(tokens[2]))
    if kind == "judgments":
        return len(tokens) == 4 and bool(_INT.match(tokens[3]))
    return len(tokens) >= 6 and bool(_NUMBER.match(tokens[4]))


def _is_json_lines(head: bytes) -> bool:
    import json  # here: a TREC file, the usual input, is told without it

    lines = [ln for ln in head.split(b"\n") if ln.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(json.loads(lines[0]), dict)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False


def _first_data_line(head: bytes) -> str | None:
    for raw in head.split(b"\n"):
        if raw.startswith(b"#") or not raw.strip():
            continue
        return raw.decode("utf-8", "replace").strip()
    return None


def _first_tokens(head: bytes, separator: str) -> list[str]:
    line = _first_data_line(head)
    return [] if line is None else [t.strip().lower() for t in line.split(separator)]


def _looks_like_header(tokens: list[str]) -> bool:
    lowered = [t.strip().lower() for t in tokens if t.strip()]
    return (bool(lowered) and not any(_NUMBER.match(t) for t in lowered)
            and sum(t in _HEADER_WORDS for t in lowered) >= 2)


def _sniff(head: bytes, kind: str, name: str) -> str:
    stripped = head.lstrip()
    if stripped.startswith(b"["):
        return "json"
    if stripped.startswith(b"{"):
        return "jsonl" if _is_json_lines(head) or b"\n" not in stripped.strip() else "json"
    line = _first_data_line(head)
    if line is None:
        return "trec"
    for separator, fmt in (("\t", "tsv"), (",", "csv")):
        cells = line.split(separator)
        if len(cells) > 1 and _looks_like_header(cells):
            if kind == "judgments" and [c.strip().lower() for c in cells] == _BEIR_HEADER:
                return "beir"
            return fmt
    tokens = line.split()
    if len(tokens) == 3 and kind == "judgments" and _INT.match(tokens[2]):
        return "qrels3"
    if len(tokens) == 3 and kind == "run":
        rows = _data_rows(head)  # the head's lines split: only a 3-column run needs them
        if rows:
            problem = rank_sequence_problem(rows)
            if problem is not None:
                raise not_ranks_error(name, *problem)
            return "msmarco"
    return "trec"


def _data_rows(head: bytes) -> list[tuple[int, list[str]]]:
    """The complete lines of the head that are not comments or blank: (line number, tokens). A head that
    ends inside its first line (longer than the head) gives none: no evidence."""
    lines = head.split(b"\n")
    if len(head) >= HEAD_BYTES and not head.endswith(b"\n"):
        lines = lines[:-1]  # the last line may go on beyond the head
    return [(number, raw.decode("utf-8", "replace").split()) for number, raw in enumerate(lines, start=1)
            if raw.strip() and not raw.startswith(b"#")]


def rank_sequence_problem(rows: Iterable[tuple[int, list[str]]]) -> tuple[int, str, str, int] | None:
    """None when, in ``rows`` of (line, tokens), each query's third column is 1, 2, ..., n in order (its lines
    together); else the first offence: (line, query id, the third column, the rank expected there)."""
    expected: dict[str, int] = {}
    previous = None
    for number, tokens in rows:
        if len(tokens) != 3:
            return number, tokens[0] if tokens else "", " ".join(tokens[2:]), 0
        qid, value = tokens[0], tokens[2]
        if qid != previous and qid in expected:
            return number, qid, value, 0
        want = expected.get(qid, 0) + 1
        if not _INT.match(value) or int(value) != want:
            return number, qid, value, want
        expected[qid], previous = want, qid
    return None


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def not_ranks_error(name: str, line: int, qid: str, value: str, want: int) -> UnknownFormatError:
    """The refusal of a 3-column run whose third column is not a rank sequence per query."""
    if want == 0 and value == "":
        found = "a line without 3 columns"
    elif want == 0:
        found = f"query {_short(qid)!r} comes back after other queries"
    else:
        found = f"query {_short(qid)!r} has {_short(value)!r} where rank {want} belongs"
    return UnknownFormatError(
        f"{name}:{line}: cannot tell this run's format: its lines have 3 columns as MS MARCO runs "
        f"(query_id doc_id rank), but the third column is not each query's rank sequence 1, 2, 3 ... ({found}); "
        f"if it holds ranks, read with {format_option('msmarco', 'run')}; if it holds scores, write the run in "
        f"TREC format (query_id Q0 doc_id rank score run_tag) or as a table with a header line "
        f"(query_id, doc_id, score) and read it with {format_option('tsv', 'run')} or "
        f"{format_option('csv', 'run')}")


# ---------------------------------------------------------------------- judgments or run?
_JUDGMENT_KEYS = ("ground_truth_document_ids",)
_RUN_KEYS = ("retrieved_document_ids", "results")
_GRADE_ONLY = set(ALIASES["grade"]) - {"score"}
_RUN_ONLY = set(ALIASES["score"]) | {"rank"}


def guess_kind(src: TextFile) -> str | None:
    """``"judgments"``, ``"run"``, or None when the first lines do not say (pass ``kinds=`` then)."""
    head = src.head()
    if head.startswith(b"PAR1"):
        return _kind_from_names(_parquet_columns(src))
    if head.startswith(BOM):
        head = head[3:]
    stripped = head.lstrip()
    if stripped[:1] in (b"[", b"{"):
        return _kind_from_json_head(stripped)
    line = _first_data_line(head)
    if line is None:
        return None
    for separator in ("\t", ","):
        cells = line.split(separator)
        if len(cells) > 1 and _looks_like_header(cells):
            return _kind_from_names(cells)
    tokens = line.split()
    if len(tokens) >= 6:
        return "run"
    if len(tokens) == 4:
        return "judgments"
    if len(tokens) == 3:
        name = os.path.basename(src.path).lower()
        return "judgments" if "qrel" in name else ("run" if "run" in name else None)
    return None


def _kind_from_names(names: list[str]) -> str | None:
    lowered = {n.strip().lower() for n in names}
    if lowered & _GRADE_ONLY or lowered >= {"corpus-id", "score"}:
        return "judgments"
    if lowered & _RUN_ONLY:
        return "run"
    return None


def _kind_from_json_head(head: bytes) -> str | None:
    text = head.decode("utf-8", "replace")
    if any(f'"{k}"' in text for k in _JUDGMENT_KEYS):
        return "judgments"
    if any(f'"{k}"' in text for k in _RUN_KEYS):
        return "run"
    keys = set(re.findall(r'"([^"\\]+)"\s*:', text))
    return _kind_from_names(sorted(keys))


def _parquet_columns(src: TextFile) -> list[str]:
    import polars as pl

    try:
        return list(pl.read_parquet_schema(src.binary_source()))
    except (pl.exceptions.PolarsError, OSError):
        return []
