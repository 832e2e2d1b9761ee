"""Which (query, document) pairs to judge: the top ``depth`` documents of each run (a depth-k pool, as TREC
builds its pools), or an explicit list of pairs.

Each run is ordered as gainscope evaluates it by default: by score descending with ties broken by doc id
descending (bytewise, as trec_eval); a run without scores in its rank order, else in the order given. Pairs come
out in query order (as first seen), then in rank order of the first run that retrieved them; each pair once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from gainscope.core.run import Run
from gainscope.errors import FormatError, PolicyError
from gainscope.io.text import TextFile, is_comment

__all__ = ["pool_runs", "read_pairs"]


def _ordered(run: Run) -> pl.DataFrame:
    frame = run.frame.with_row_index("_order")
    if run.has_scores:
        frame = frame.with_columns(pl.col("doc_id").cast(pl.Binary).alias("_bytes"))
        return frame.sort(["query_id", "score", "_bytes"], descending=[False, True, True], maintain_order=True)
    if run.has_ranks:
        return frame.sort(["query_id", "rank", "_order"], maintain_order=True)
    return frame.sort(["query_id", "_order"], maintain_order=True)


def pool_runs(runs: Sequence[Run], depth: int) -> list[tuple[str, str]]:
    """The union of the top ``depth`` documents of every run, per query."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise PolicyError(f"the pool depth must be an integer >= 1; got {depth!r}")
    seen: dict[tuple[str, str], None] = {}
    first_query: dict[str, int] = {}
    for run in runs:
        top = _ordered(run).group_by("query_id", maintain_order=True).head(depth)
        for q, d in zip(top["query_id"].to_list(), top["doc_id"].to_list(), strict=True):
            first_query.setdefault(q, len(first_query))
            seen.setdefault((q, d), None)
    return sorted(seen, key=lambda pair: first_query[pair[0]])  # stable: rank order kept within a query


#: what a line of each width is read as, and the columns after the ids that must be numbers
_LAYOUTS: dict[int, tuple[str, int, tuple[tuple[int, str], ...]]] = {
    2: ("'query_id doc_id'", 1, ()),
    3: ("'query_id doc_id grade' (or an MS MARCO run's 'query_id doc_id rank')", 1, ((2, "a number"),)),
    4: ("a qrels line 'query_id iteration doc_id grade'", 2, ((3, "a grade"),)),
    6: ("a run line 'query_id Q0 doc_id rank score tag'", 2, ((3, "a rank"), (4, "a score"))),
}


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """Explicit pairs, each once, in file order: ``query_id doc_id`` per line, or the lines of a qrels file
    (``query_id iteration doc_id grade``), a 3-column qrels or MS MARCO run, or a TREC run (6 columns); the
    doc id is the third column of the 4- and 6-column lines. Columns are separated by runs of whitespace.

    Lines are read as every reader reads them (:mod:`gainscope.io.text`: gzip, BOM, UTF-8 with the line named
    on a bad byte), comments by the same rule (:func:`~gainscope.io.text.is_comment`): a line starting with
    ``#`` is a comment and a ``#`` anywhere else is data, so ``doc#1`` is that document. A line of another width,
    a grade, rank or score column that is not a number, and an indented ``#`` line are a
    :class:`~gainscope.errors.FormatError` naming the file and line.
    """
    src = TextFile(path)
    out: dict[tuple[str, str], None] = {}
    for number, offset, raw in src.lines():
        if is_comment(raw):
            continue
        if not raw.strip():
            continue
        if not raw.isascii():
            src.decode_line(raw, number, offset)
        tokens = [t.decode("utf-8") for t in raw.split()]
        text = " ".join(tokens)
        if tokens[0].startswith("#"):
            raise FormatError("a line starting with '#' after spaces is not a comment (comments start with '#' in "
                              "the first column); remove the spaces or the line", path=src.name, line=number,
                              text=text)
        layout = _LAYOUTS.get(len(tokens))
        if layout is None:
            what = "expected 'query_id doc_id'" if len(tokens) < 2 else f"{len(tokens)} columns"
            raise FormatError(f"{what}: a line holds 'query_id doc_id', a qrels line (4 columns), a 3-column qrels "
                              "or MS MARCO run line, or a TREC run line (6 columns)" + _hash_hint(tokens),
                              path=src.name, line=number, text=text)
        shape, doc_column, numbers = layout
        for column, kind in numbers:
            if not _is_number(tokens[column]):
                raise FormatError(f"{len(tokens)} columns are read as {shape}, but column {column + 1} "
                                  f"({tokens[column]!r}) is not {kind}" + _hash_hint(tokens),
                                  path=src.name, line=number, text=text)
        out.setdefault((tokens[0], tokens[doc_column]), None)
    return list(out)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _hash_hint(tokens: list[str]) -> str:
    if any(t.startswith("#") for t in tokens[1:]):
        return "; a '#' after the first column is data, not a comment (a comment is a line that starts with '#')"
    return ""
