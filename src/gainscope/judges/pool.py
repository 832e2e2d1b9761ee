"""Which (query, document) pairs to judge: the top ``depth`` documents of each run (a depth-k pool, as TREC
builds its pools), or an explicit list of pairs; and the material of the budgeted strategies of
:mod:`gainscope.judges.adjudication`, every run's ranking of every query.

Each run is ordered as gainscope evaluates it by default (:func:`gainscope.io.writers.trec_order`): by score
descending with ties broken by doc id descending (bytewise, as trec_eval); a run without scores in its rank order,
else in the order given. Pairs come out in query order (as first seen), then in rank order of the first run that
retrieved them; each pair once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gainscope.core.run import Run
from gainscope.errors import FormatError, InputError, PolicyError, option
from gainscope.io.text import TextFile, is_comment
from gainscope.io.writers import is_trec_word, write_file

__all__ = ["PairsFile", "Rankings", "pairs_text", "pool_runs", "rankings", "read_pairs", "read_pairs_file",
           "write_pairs"]


def _check_depth(depth: int | None) -> None:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise PolicyError(f"the pool {option('depth', ..., cli='--pool-depth')} must be an integer >= 1; got {depth!r}")


def pool_runs(runs: Sequence[Run], depth: int) -> list[tuple[str, str]]:
    """The union of the top ``depth`` documents of every run, per query."""
    from gainscope.io.writers import trec_order

    if depth is None:
        raise PolicyError(f"the pool {option('depth', ..., cli='--pool-depth')} must be an integer >= 1; got None")
    _check_depth(depth)
    seen: dict[tuple[str, str], None] = {}
    first_query: dict[str, int] = {}
    for run in runs:
        top = trec_order(run).group_by("query_id", maintain_order=True).head(depth)
        for q, d in zip(top["query_id"].to_list(), top["doc_id"].to_list(), strict=True):
            first_query.setdefault(q, len(first_query))
            seen.setdefault((q, d), None)
    return sorted(seen, key=lambda pair: first_query[pair[0]])  # stable: rank order kept within a query


@dataclass(frozen=True)
class Rankings:
    """Every run's ranking of every query, cut at a depth: ``docs[q][r]`` is run ``r``'s doc ids for query
    ``query_ids[q]`` in rank order (empty when the run does not rank the query). Queries are in bytewise order."""

    query_ids: tuple[str, ...]
    runs: tuple[str, ...]
    docs: tuple[tuple[tuple[str, ...], ...], ...]

    def candidates(self, q: int) -> list[str]:
        """The pool of query ``q``: every document some run ranks, in depth order (rank 1 of each run in run
        order, then rank 2, ...), each once."""
        seen: dict[str, None] = {}
        lists = self.docs[q]
        for i in range(max((len(x) for x in lists), default=0)):
            for docs in lists:
                if i < len(docs):
                    seen.setdefault(docs[i], None)
        return list(seen)


def rankings(runs: Sequence[Run], depth: int | None = None) -> Rankings:
    """The rankings of ``runs`` (gainscope's order), cut at ``depth`` (None: whole rankings)."""
    from gainscope.io.writers import trec_order

    _check_depth(depth)
    per_run: list[dict[str, list[str]]] = []
    for run in runs:
        frame = trec_order(run)
        if depth is not None:
            frame = frame.group_by("query_id", maintain_order=True).head(depth)
        lists: dict[str, list[str]] = {}
        for q, d in zip(frame["query_id"].to_list(), frame["doc_id"].to_list(), strict=True):
            lists.setdefault(q, []).append(d)
        per_run.append(lists)
    query_ids = sorted({q for lists in per_run for q in lists}, key=lambda s: s.encode("utf-8", "surrogatepass"))
    docs = tuple(tuple(tuple(lists.get(q, ())) for lists in per_run) for q in query_ids)
    return Rankings(tuple(query_ids), tuple(r.name for r in runs), docs)


#: what a line of each width is read as, and the columns after the ids that must be numbers
_LAYOUTS: dict[int, tuple[str, int, tuple[tuple[int, str], ...]]] = {
    2: ("'query_id doc_id'", 1, ()),
    3: ("'query_id doc_id grade' (or an MS MARCO run's 'query_id doc_id rank')", 1, ((2, "a number"),)),
    4: ("a qrels line 'query_id iteration doc_id grade'", 2, ((3, "a grade"),)),
    6: ("a run line 'query_id Q0 doc_id rank score tag'", 2, ((3, "a rank"), (4, "a score"))),
}


@dataclass(frozen=True)
class PairsFile:
    """A pairs file as read: the pairs, each once, in file order; the line each was first read on; and the comment
    lines before the first pair (``#`` and one space removed: ``gainscope pool`` says there what it chose)."""

    pairs: tuple[tuple[str, str], ...]
    lines: tuple[int, ...]
    header: tuple[str, ...]


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """The pairs of :func:`read_pairs_file`."""
    return list(read_pairs_file(path).pairs)


def read_pairs_file(path: str | Path) -> PairsFile:
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
    out: dict[tuple[str, str], int] = {}
    header: list[str] = []
    for number, offset, raw in src.lines():
        if is_comment(raw):
            if not out:
                header.append(raw.decode("utf-8", "replace").rstrip("\r\n")[1:].removeprefix(" "))
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
        out.setdefault((tokens[0], tokens[doc_column]), number)
    return PairsFile(tuple(out), tuple(out.values()), tuple(header))


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


def pairs_text(pairs: Sequence[tuple[str, str]], *, header: Sequence[str] = ()) -> str:
    """``query_id doc_id`` lines that :func:`read_pairs` reads back, after ``#`` comment lines ``header``. An id
    with ASCII whitespace (what the reader splits at), or a query id starting with ``#`` (a comment line), cannot be
    written that way and is refused."""
    lines = [f"# {h}" for h in header]
    for q, d in pairs:
        for what, ident in (("query id", q), ("doc id", d)):
            if not is_trec_word(ident):
                raise InputError(f"cannot write the pair ({q!r}, {d!r}): a pairs file holds whitespace-separated "
                                 f"ids, so a {what} must be a non-empty word")
        if q.startswith("#"):
            raise InputError(f"cannot write the pair ({q!r}, {d!r}): a line starting with '#' is a comment in a "
                             "pairs file")
        lines.append(f"{q} {d}")
    return "".join(line + "\n" for line in lines)


def write_pairs(pairs: Sequence[tuple[str, str]], path: str | Path, *, header: Sequence[str] = ()) -> None:
    """Write :func:`pairs_text` to ``path``."""
    write_file(path, pairs_text(pairs, header=header))
