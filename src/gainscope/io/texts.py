"""Query and document texts, for the LLM judges: JSONL, TSV, or a BEIR folder.

* JSONL, one object per line: queries ``{"query_id", "text", "title"?, "narrative"?, "options"?}``, documents
  ``{"doc_id", "text", "title"?}``. BEIR's ``_id`` and the common ``id`` / ``qid`` / ``docid`` are accepted as the
  id, ``query`` / ``contents`` / ``body`` as the text.
* TSV: ``id <TAB> text`` per line (MS MARCO's ``queries.tsv`` and ``collection.tsv``); a third column, if any, is
  the title of a document.
* A BEIR folder: ``queries.jsonl`` and ``corpus.jsonl`` inside it.
* A list of query ids (a training split): :func:`read_query_ids` takes the first column of each line, so a
  plain list, a queries TSV or a qrels file works; a JSONL file is read as queries.

Corpora can be large: :func:`read_documents` keeps only the documents asked for (``only=``) while streaming.
Every problem names the file and line: a line that is not JSON, an object without an id or text, an id given
twice with different text.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gainscope.errors import FileAccessError, FormatError, InputError
from gainscope.io.text import regular_file_size

__all__ = ["Document", "Query", "read_documents", "read_queries", "read_query_ids"]

_ID_KEYS = {"query": ("query_id", "qid", "_id", "id"), "doc": ("doc_id", "docid", "_id", "id", "pid")}
_TEXT_KEYS = ("text", "query", "contents", "body", "passage")


@dataclass(frozen=True)
class Query:
    """A query's text (and TREC-style title and narrative when given)."""

    query_id: str
    text: str
    title: str = ""
    narrative: str = ""
    #: per-query options (a JSONL line's ``options`` object), for search templates' ``{{opt.x}}``
    options: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Document:
    """A document's text and title."""

    doc_id: str
    text: str
    title: str = ""


def _source(path: Path, kind: str) -> Path:
    """The file to read: ``path``, or the queries/corpus file of a BEIR folder; only a regular file (see
    :func:`~gainscope.io.text.regular_file_size`)."""
    if path.is_dir():
        name = "queries.jsonl" if kind == "query" else "corpus.jsonl"
        inner = path / name
        if not inner.exists():
            raise FileAccessError(f"{path} is a folder without {name}; a BEIR folder holds queries.jsonl and "
                                  f"corpus.jsonl", path=str(path))
        path = inner
    regular_file_size(str(path), str(path))
    return path


def json_object(line: str, number: int, path: Path, kind: str) -> dict[str, Any]:
    """The JSON object on line ``number`` of ``path``; a FormatError naming the file and line when it is not one."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not a JSON object ({exc.msg}); each line holds one {kind}", path=str(path),
                          line=number, text=line.rstrip()[:200]) from None
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object per line; got {type(obj).__name__}", path=str(path),
                          line=number)
    return obj


def text_source(path: str | Path, kind: str) -> Path:
    """The file to read for ``kind`` (``"query"`` or ``"doc"``): ``path`` itself, or ``queries.jsonl`` /
    ``corpus.jsonl`` inside a BEIR folder; an InputError when it does not exist."""
    return _source(Path(path), kind)


def raw_records(path: Path, kind: str) -> Iterator[tuple[int, list[str] | dict[str, Any]]]:
    """``(line, record)`` per non-blank line: the columns of a TSV file (``.tsv``/``.txt``; at least an id and a
    text), else the JSON object of a JSON Lines file; errors name the file and line."""
    tsv = path.suffix.lower() in (".tsv", ".txt")
    with path.open(encoding="utf-8-sig") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            if tsv:
                parts = line.rstrip("\n\r").split("\t")
                if len(parts) < 2:
                    raise FormatError(f"expected 'id<TAB>text'; got {len(parts)} column(s)", path=str(path),
                                      line=number, text=line.rstrip())
                yield number, parts
            else:
                yield number, json_object(line, number, path, kind)


def _records(path: Path, kind: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """``(line, id, text, extras)`` per record."""
    for number, obj in raw_records(path, kind):
        if isinstance(obj, list):
            yield number, obj[0], obj[1], {"title": obj[2]} if len(obj) > 2 else {}
            continue
        ident = next((obj[k] for k in _ID_KEYS[kind] if k in obj), None)
        text = next((obj[k] for k in _TEXT_KEYS if k in obj), None)
        if ident is None or text is None or not isinstance(text, str):
            want = f"an id ({', '.join(_ID_KEYS[kind])}) and a text ({', '.join(_TEXT_KEYS)})"
            raise FormatError(f"a {kind} needs {want}; keys: {', '.join(obj) or 'none'}", path=str(path),
                              line=number)
        extras: dict[str, Any] = {k: str(obj[k]) for k in ("title", "narrative") if isinstance(obj.get(k), str)}
        if kind == "query" and obj.get("options") is not None:
            if not isinstance(obj["options"], dict):
                raise FormatError(f"'options' must be a JSON object; got {obj['options']!r}", path=str(path),
                                  line=number)
            extras["options"] = obj["options"]
        yield number, str(ident), text, extras


def read_queries(path: str | Path) -> dict[str, Query]:
    """Query texts by query id (see the module docstring for the formats)."""
    src = _source(Path(path), "query")
    out: dict[str, Query] = {}
    for number, qid, text, extras in _records(src, "query"):
        q = Query(qid, text, extras.get("title", ""), extras.get("narrative", ""), extras.get("options", {}))
        if qid in out and out[qid] != q:
            raise FormatError(f"query {qid!r} is given twice with different text", path=str(src), line=number)
        out[qid] = q
    return out


def read_query_ids(path: str | Path) -> list[str]:
    """Query ids, in file order, each once: the first whitespace-separated column of every line (blank lines and
    ``#`` comment lines skipped), or the ids of a JSONL queries file."""
    p = Path(path)
    if p.suffix.lower() == ".jsonl" or p.is_dir():
        return list(read_queries(p))
    regular_file_size(str(p), str(p))
    out: dict[str, None] = {}
    with p.open(encoding="utf-8-sig") as f:
        for line in f:
            body = line.split()
            if body and not body[0].startswith("#"):
                out.setdefault(body[0], None)
    if not out:
        raise InputError(f"{p}: no query id in the file; write one query id per line")
    return list(out)


def read_documents(path: str | Path, *, only: Collection[str] | None = None) -> dict[str, Document]:
    """Document texts by doc id; with ``only``, the documents outside it are skipped while reading."""
    src = _source(Path(path), "doc")
    out: dict[str, Document] = {}
    for number, did, text, extras in _records(src, "doc"):
        if only is not None and did not in only:
            continue
        d = Document(did, text, extras.get("title", ""))
        if did in out and out[did] != d:
            raise FormatError(f"document {did!r} is given twice with different text", path=str(src), line=number)
        out[did] = d
    return out
